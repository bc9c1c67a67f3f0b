// Package codecheck holds tests of the code's own shape that reviews ask
// for: it has no code of its own.
package codecheck
