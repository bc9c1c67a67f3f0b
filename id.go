package engram

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// IDs are 26-character ULIDs (Crockford base32): 48 bits of milliseconds then
// 80 random bits, so they sort by creation time and are safe in URLs. Within
// one millisecond the random part grows by a fresh crypto-random step of up
// to 2^48, not by one: IDs from one process stay strictly increasing (a
// batch keeps its order), but knowing one ID does not tell the next, so an
// ID seen by one user does not lead to another user's records.

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var idState struct {
	sync.Mutex
	ms uint64
	hi uint16
	lo uint64
}

// NewID returns a new unique, time-ordered identifier.
func NewID() string { return newIDAt(time.Now()) }

func newIDAt(t time.Time) string {
	ms := uint64(t.UnixMilli())
	idState.Lock()
	if ms <= idState.ms {
		ms = idState.ms
		var b [8]byte
		_, _ = rand.Read(b[:])
		step := binary.BigEndian.Uint64(b[:])>>16 | 1 // 1 to 2^48
		lo := idState.lo + step
		if lo < idState.lo {
			idState.hi++ // the 15-bit start leaves room for 2^79 / 2^48 steps
		}
		idState.lo = lo
	} else {
		var b [10]byte
		_, _ = rand.Read(b[:])
		idState.ms = ms
		idState.hi = binary.BigEndian.Uint16(b[:2]) & 0x7fff // headroom for increments
		idState.lo = binary.BigEndian.Uint64(b[2:])
	}
	hi, lo := idState.hi, idState.lo
	idState.Unlock()

	var raw [16]byte
	raw[0] = byte(ms >> 40)
	raw[1] = byte(ms >> 32)
	raw[2] = byte(ms >> 24)
	raw[3] = byte(ms >> 16)
	raw[4] = byte(ms >> 8)
	raw[5] = byte(ms)
	binary.BigEndian.PutUint16(raw[6:8], hi)
	binary.BigEndian.PutUint64(raw[8:], lo)
	return encodeULID(raw)
}

func encodeULID(b [16]byte) string {
	// 128 bits into 26 characters of 5 bits; the first character holds 3 bits.
	var out [26]byte
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidID reports whether s has the shape of an ID made by NewID. Stores
// accept only such IDs so that a malformed id is an EINVALID error, not a
// silent miss.
func ValidID(s string) bool {
	if len(s) != 26 || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') || c == 'I' || c == 'L' || c == 'O' || c == 'U' {
			return false
		}
	}
	return true
}

// CheckID returns nil if id is valid, else an EINVALID error that names what
// the id was for ("memory", "episode"). Every transport reports a bad id
// with this one sentence.
func CheckID(what, id string) error {
	if !ValidID(id) {
		return Errorf(EINVALID, "%s id %q is not a valid id", what, id)
	}
	return nil
}
