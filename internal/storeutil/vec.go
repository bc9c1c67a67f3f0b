package storeutil

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeVec returns v as little-endian float32s, the layout of the vec
// column in every backend, so a dump moves between them unchanged.
func EncodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVec decodes a vec column of dim values into a new slice; an error
// if dim is not positive or b does not hold exactly dim float32s.
func DecodeVec(b []byte, dim int) ([]float32, error) {
	if dim <= 0 || len(b) != 4*dim {
		return nil, fmt.Errorf("%d bytes do not hold %d float32s", len(b), dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
