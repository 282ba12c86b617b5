// The header does the work; SwiftPM needs a source file in a C target.
