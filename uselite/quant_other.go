//go:build !amd64

package uselite

// rowStepImpls lists the implementations this CPU runs, for tests.
func rowStepImpls() []rowStepsImpl { return []rowStepsImpl{goRowSteps} }
