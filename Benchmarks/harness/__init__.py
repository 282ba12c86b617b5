"""The pieces of Benchmarks/run-benchmarks, one concept per module:

programs    running a measuring program or timing a whole process
builds      building the peers and the Swift side, and finding the binaries
tokenserver the loopback provider shared by the whole run, and its /stats
descriptor  the AUTHKIT_HOME with providers/bench.json pointing at it
sides       what each side runs for each row (AuthKit, x/oauth2, liboauth, oauthlib)
rounds      side-by-side rounds, alternating which side goes first
summary     min/median/max per side and the ratio of medians
table       the Markdown report
"""
