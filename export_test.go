package engram

// NewIDAt is NewID at a given time, for tests of IDs made in one millisecond.
var NewIDAt = newIDAt
