package main

import "github.com/loadlab/loadlab/lab/scenario"

// labOpener opens lab sessions for `lab run`. It is set to package
// lab/env's Open once that package is merged.
var labOpener scenario.Opener
