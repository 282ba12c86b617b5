// The libFuzzer program of Fuzz/run: one binary, its harness named by the
// first argument (see Driver.swift and Fuzz/README.md).
fuzzMain()
