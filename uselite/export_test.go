package uselite

// FLOPs is flops, for the benchmarks of the external test package.
var FLOPs = flops
