package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
)

// Run is the model of a run's results, read back from its directory, from
// the history, or merged from several partial runs: its summary, its
// interval histograms, its exact totals and what the monitors sampled.
type Run struct {
	// Source is where the run was read from: its directory, its id in the
	// history, or the sources of the runs merged into it.
	Source  string
	Summary *Summary
	// Intervals are, per histogram log tag (Tag), the operation's
	// intervals in order.
	Intervals map[string][]*IntervalData
	// Totals are the run's exact statistics per phase and operation; nil
	// for a run that did not finish (killed, or still going) or that a
	// perflab before totals.jsonl wrote.
	Totals *Totals
	// Points are what the monitors sampled (resources.csv).
	Points []monitor.Point
	// Part, if set, names the run as a part of a merge (w2, a distributed
	// run's worker 2): its monitors are named after it ("generator#w2").
	// Unset, a part is named by its place among the parts (#3).
	Part string
	// Samples are the first failed request of each message of a step
	// (failures.jsonl), when FailureLog: the run had --dump-failures and
	// is read from its directory (the history does not keep them).
	Samples    map[SampleKey]FailureSample
	FailureLog bool
}

// RunIDBase is the id a run started at start of a plan named plan gets,
// before a suffix that makes it unique: 20261126-034613.311-checkout.
// The plan's name is made a name of the id's characters (nameSlug).
func RunIDBase(start time.Time, plan string) string {
	return start.Format("20060102-150405.000") + "-" + nameSlug(plan)
}

// maxSlug is the most bytes of a plan's name in a run id.
const maxSlug = 100

// nameSlug is a plan's name in the characters of a run id, never empty,
// at most maxSlug bytes. Latin letters lose their accents (Café: Cafe),
// ligatures and full-width letters are the letters they stand for (NFKD),
// and the few Latin letters that do not decompose are spelt as usual (ß:
// ss, Ł: L, Æ: AE); any other run of characters an id cannot hold is a
// '-'. Where a letter or digit of another script is dropped, or nothing
// is left, the slug ends in the first 8 hex digits of the name's SHA-256:
// two names of another script make two ids, and every run's id names its
// plan. Unicode letters are not kept: an id names a directory, a row of
// the history, a URL and Kubernetes objects (ASCII only), and a name with
// accents has two forms in Unicode (NFC, NFD: macOS's file names) that
// would be two ids.
func nameSlug(plan string) string {
	if plan == "" {
		return "run"
	}
	var b strings.Builder
	lost := false
	for _, r := range norm.NFKD.String(plan) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r): // an accent, decomposed from its letter
		case latinSpelling[r] != "":
			b.WriteString(latinSpelling[r])
		default:
			lost = lost || unicode.IsLetter(r) || unicode.IsNumber(r)
			b.WriteByte(' ') // a '-' with the characters around it that an id cannot hold
		}
	}
	slug := strings.Trim(unsafeID.ReplaceAllString(b.String(), "-"), "-")
	if !lost && slug != "" {
		return cutSlug(slug, maxSlug)
	}
	sum := sha256.Sum256([]byte(plan))
	hash := hex.EncodeToString(sum[:4])
	if slug == "" {
		return hash
	}
	return cutSlug(slug, maxSlug-len(hash)-1) + "-" + hash
}

// cutSlug is slug cut to n bytes, without a '-' at its end.
func cutSlug(slug string, n int) string {
	if len(slug) > n {
		slug = strings.TrimRight(slug[:n], "-")
	}
	return slug
}

// latinSpelling spells the Latin letters that have no decomposition.
var latinSpelling = map[rune]string{
	'ß': "ss", 'ẞ': "SS", 'Æ': "AE", 'æ': "ae", 'Œ': "OE", 'œ': "oe", 'Ø': "O", 'ø': "o",
	'Ł': "L", 'ł': "l", 'Đ': "D", 'đ': "d", 'Ð': "D", 'ð': "d", 'Þ': "Th", 'þ': "th", 'ı': "i",
}

// unsafeID matches what a run id must not hold.
var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// MaxRunID is the longest run id, in bytes: with what perflab appends to
// make the ids of a run's parts and merges (-w12, -merged, -2), a
// directory's name stays within the 255 bytes file systems allow.
const MaxRunID = 200

// CheckRunID says why id cannot be a run id, nil if it can. A run id
// names the run's directory (and its parts', its merge's), its place in
// the history, and is an argument of perflab's commands: letters, digits,
// '.', '_' and '-', beginning with a letter or a digit (so neither "." nor
// ".." nor an option), at most MaxRunID bytes.
func CheckRunID(id string) error {
	switch {
	case id == "":
		return errors.New("the run id is empty")
	case len(id) > MaxRunID:
		return fmt.Errorf("run id %.40q...: %d bytes, more than a run id's %d", id, len(id), MaxRunID)
	case unsafeID.MatchString(id) || !isAlnum(id[0]):
		return fmt.Errorf("run id %.60q: a run id is letters, digits, '.', '_' and '-', beginning with a letter or a digit (it names a directory)", id)
	}
	return nil
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// IntervalsOf is an operation's interval histograms in a stage. A
// transaction or scenario of a run directory written before tags carried
// the kind is found under its bare name, when no step has that name.
func (rd *Run) IntervalsOf(stage int, op Operation) []*IntervalData {
	if ivs, ok := rd.Intervals[StageTag(stage, op.Scenario, op.Name, op.Kind)]; ok || op.Kind == metrics.KindStep {
		return ivs
	}
	for _, ph := range rd.Summary.Stages {
		if ph.Index != stage {
			continue
		}
		for _, o := range ph.Operations {
			if o.Kind == metrics.KindStep && o.Scenario == op.Scenario && o.Name == op.Name {
				return nil // the bare tag is the step's
			}
		}
	}
	return rd.Intervals[StageTag(stage, op.Scenario, op.Name, metrics.KindStep)]
}

// MaxSummary bounds each of a run directory's files read whole
// (summary.json, totals.jsonl, run.json, plan.yaml): far above what a run
// writes, and a directory from elsewhere holding /dev/zero or a file of
// gigabytes is refused rather than read.
const MaxSummary = 1 << 30

// ReadDir reads summary.json and latency.hlog of a run directory. A
// directory without summary.json (a run still going, or killed) is read
// from its intervals: its summary is rebuilt from them.
func ReadDir(dir string) (*Run, error) {
	f, err := inputfile.OpenLimit(filepath.Join(dir, "summary.json"), MaxSummary,
		"a summary.json may be "+inputfile.FormatSize(MaxSummary)+" (results.MaxSummary), far above what a run writes")
	if errors.Is(err, os.ErrNotExist) {
		return readUnfinished(dir)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := DecodeSummary(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if s.Format != Format {
		return nil, fmt.Errorf("%s: summary.json format %q, want %q", dir, s.Format, Format)
	}
	rd, err := readIntervals(dir)
	if err != nil {
		return nil, err
	}
	rd.Summary = s
	if rd.Totals, err = readTotalsFile(filepath.Join(dir, TotalsFile)); err != nil {
		return nil, err
	}
	return rd, nil
}

// wholeLines is a file up to the end of its last whole line: the log of a
// run killed while writing it may end in the middle of one.
func wholeLines(f *os.File) (io.Reader, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end := fi.Size()
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := min(int64(len(buf)), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return nil, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return io.NewSectionReader(f, 0, end-n+int64(i)+1), nil
		}
		end -= n
	}
	return io.NewSectionReader(f, 0, 0), nil
}

// readIntervals reads a run directory's interval histograms with their
// counts, and what the monitors sampled.
func readIntervals(dir string) (*Run, error) {
	f, err := os.Open(filepath.Join(dir, "latency.hlog"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	whole, err := wholeLines(f)
	if err != nil {
		return nil, err
	}
	ivs, err := readHistogramLog(whole)
	if err != nil {
		return nil, fmt.Errorf("%s: latency.hlog: %w", dir, err)
	}
	sortByStart(ivs)
	if err := readIntervalCounts(filepath.Join(dir, IntervalsCSV), ivs); err != nil {
		return nil, err
	}
	if err := addIntervalErrors(filepath.Join(dir, IntervalErrorsCSV), ivs); err != nil {
		return nil, err
	}
	points, err := readResources(filepath.Join(dir, "resources.csv"))
	if err != nil {
		return nil, err
	}
	samples, logged, err := readSamples(dir)
	if err != nil {
		return nil, err
	}
	return &Run{Source: dir, Intervals: ivs, Points: points, Samples: samples, FailureLog: logged}, nil
}
