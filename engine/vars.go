package engine

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/dataset"
	"github.com/perflab/perflab/plan"
)

// source is a data source with its cursor for one stage.
type source struct {
	d      *plan.Data
	cursor *dataset.Cursor
	cols   map[string]int
}

type sources struct {
	list   []*source
	byName map[string]int
}

// newSources opens a stage's data sources; a sequential one hands a
// worker of a distributed run its share of the rows (plan.Segment).
func newSources(p *plan.Plan, seg plan.Segment) *sources {
	s := &sources{byName: map[string]int{}}
	for _, d := range p.Data {
		src := &source{d: d}
		if d.IsList() {
			mode, _ := dataset.ParseMode(d.Mode) // validated by plan
			src.cursor = dataset.NewCursor(len(d.Rows), mode)
			if !seg.Whole() {
				src.cursor.Segment(seg.Index, seg.Count)
			}
			src.cols = map[string]int{}
			for i, c := range d.Cols {
				src.cols[c] = i
			}
		}
		s.byName[d.Name] = len(s.list)
		s.list = append(s.list, src)
	}
	return s
}

// vars is a virtual user's view of names: built-ins, extracted values, data
// rows picked for the current iteration, then the stage's variables.
type vars struct {
	vu        int
	vuStr     string
	iteration int64
	iterStr   string
	scenario  string
	stage     string
	runID     string
	base      map[string]string // stage variables, setup extractions, env
	own       map[string]string // extracted by this VU; nil until the first
	data      *sources
	picks     []int // row picked per source this iteration, -1 = none yet
	rng       *rand.Rand
	// missed are the names an extraction left unset, until one is set:
	// why a later step finds them unset (nil until an extraction misses).
	missed map[string]miss
	// phase-only names: index and item of a repeat
	index  string
	item   []string
	itemDS *source
}

func newVars(vu int, scenario, stage, runID string, base map[string]string, data *sources, seed, stream uint64) *vars {
	v := &vars{
		vu: vu, vuStr: strconv.Itoa(vu), scenario: scenario, stage: stage, runID: runID,
		base: base, data: data,
		picks: make([]int, len(data.list)),
		rng:   rand.New(rand.NewPCG(seed, stream)),
	}
	v.setIteration(0)
	return v
}

func (v *vars) setIteration(i int64) {
	v.iteration = i
	v.iterStr = "" // formatted when a template asks for it
	for k := range v.picks {
		v.picks[k] = -1
	}
}

// nextRow takes the next row of data source name for the VU, whether a
// step reads it or not (a loop's rows: each pass takes a row, as a CSV
// Data Set in a JMeter loop reads a line at each pass).
func (v *vars) nextRow(name string) {
	if i, ok := v.data.byName[name]; ok && v.data.list[i].d.IsList() {
		v.picks[i] = v.data.list[i].cursor.Next(v.vu, v.rng)
	}
}

// repeatPass begins pass i of a setup or teardown step's repeat: ${index}
// is i, ${item} the row i of src (for_each), and the pass picks data rows
// of its own.
func (v *vars) repeatPass(i int, src *source) {
	v.index = strconv.Itoa(i)
	v.setIteration(int64(i))
	if src != nil {
		v.item, v.itemDS = src.d.Rows[i], src
	}
}

// endRepeat ends a repeat: ${index} and ${item} are its own.
func (v *vars) endRepeat() { v.index, v.item, v.itemDS = "", nil, nil }

// Set stores an extracted value.
func (v *vars) Set(name, value string) {
	if v.own == nil { // a VU that extracts nothing has no map
		v.own = map[string]string{}
	}
	v.own[name] = value
	if v.missed != nil {
		delete(v.missed, name)
	}
}

// miss is an extraction that left a name unset: in which iteration, by
// which step, and the name whose extract failed (the rest of the step's
// extracts were not reached).
type miss struct {
	iteration    int64
	step, failed string
}

// Missed notes that step's extraction left name unset (phttp.MissRecorder).
func (v *vars) Missed(name, step, failed string) {
	if _, ok := v.own[name]; ok {
		return // it keeps the value an earlier iteration extracted
	}
	if v.missed == nil {
		v.missed = map[string]miss{}
	}
	v.missed[name] = miss{v.iteration, step, failed}
}

// Unset says why name has no value (tmpl.Explainer): the extraction that
// failed to set it, or where values come from.
func (v *vars) Unset(name string) string {
	m, ok := v.missed[name]
	if !ok {
		return "nothing has set it for this VU: a value comes from the plan's vars and data, setup's extracts, or the extract of an earlier step, which sets nothing when the step fails before it"
	}
	what := "step " + m.step + "'s extract of " + name + " failed"
	if m.failed != name {
		what = "step " + m.step + "'s extract of " + name + " was not reached: its extract of " + m.failed + " failed"
	}
	if m.iteration == v.iteration {
		return what + " in this iteration"
	}
	return what + " in iteration " + strconv.FormatInt(m.iteration, 10) + ", and nothing has set it since"
}

// Lookup resolves a template name.
func (v *vars) Lookup(name string) (string, bool) {
	switch name {
	case "vu":
		return v.vuStr, true
	case "iteration":
		if v.iterStr == "" {
			v.iterStr = strconv.FormatInt(v.iteration, 10)
		}
		return v.iterStr, true
	case "scenario":
		return v.scenario, true
	case "stage":
		return v.stage, true
	case "run_id":
		return v.runID, true
	case "uuid":
		return uuid(v.rng), true
	case "timestamp_ms":
		return strconv.FormatInt(time.Now().UnixMilli(), 10), true
	case "index":
		if v.index != "" {
			return v.index, true
		}
	case "item":
		if v.item != nil {
			return v.item[0], true
		}
	}
	if s, ok := v.own[name]; ok {
		return s, true
	}
	src, col, hasCol := strings.Cut(name, ".")
	if i, ok := v.data.byName[src]; ok {
		return v.fromSource(i, col, hasCol)
	}
	if hasCol && src == "item" && v.item != nil && v.itemDS != nil {
		if c, ok := v.itemDS.cols[col]; ok {
			return v.item[c], true
		}
	}
	s, ok := v.base[name]
	return s, ok
}

func (v *vars) fromSource(i int, col string, hasCol bool) (string, bool) {
	src := v.data.list[i]
	if !src.d.IsList() {
		return src.d.Content, !hasCol
	}
	row := v.picks[i]
	if row < 0 {
		row = src.cursor.Next(v.vu, v.rng)
		v.picks[i] = row
	}
	r := src.d.Rows[row]
	if !hasCol {
		return r[0], true
	}
	c, ok := src.cols[col]
	if !ok {
		return "", false
	}
	return r[c], true
}

func uuid(r *rand.Rand) string {
	var b [16]byte
	a, c := r.Uint64(), r.Uint64()
	for i := 0; i < 8; i++ {
		b[i] = byte(a >> (8 * i))
		b[8+i] = byte(c >> (8 * i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
