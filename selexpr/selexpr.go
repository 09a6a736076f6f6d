// Package selexpr is the selection language of dead letters: a CEL
// expression (github.com/google/cel-go, the language Kafka UI users
// already write) over one message — its key, headers, properties, body,
// decoded value, failure facts and age — that is true for the messages it
// selects. Browse filters, job selections (replay, move, delete, dry
// runs) and search all evaluate it here.
//
// An expression is compiled once (Compile keeps the programs it built)
// and evaluated under a cost limit, so a selection cannot spin on a large
// body. A compile error names its line and column. Refs lists what an
// expression reads, so a caller can refuse one that reads a masked value
// before any message is matched.
package selexpr

import (
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// CostLimit bounds one evaluation in CEL's cost units (about one per
// operation, a tenth per byte a string function scans): a 1 MiB body
// searched a few times fits; nested loops stop after about 0.2 s.
const CostLimit = 1_000_000

// MaxLength bounds an expression's text.
const MaxLength = 4096

// Error is an expression that does not compile: where and why.
type Error struct {
	Line, Column int // 1-based
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Program is a compiled expression.
type Program struct {
	src  string
	prg  cel.Program
	refs []Ref
	uses map[string]bool // the variables it reads: only those are built
}

// String is the expression's source.
func (p *Program) String() string { return p.src }

// Refs are what the expression reads, one per chain of field and constant
// index steps (value.order.id, headers["x-tenant"]); see Ref.
func (p *Program) Refs() []Ref { return p.refs }

var (
	envOnce sync.Once
	env     *cel.Env
	errEnv  error

	// cache keeps compiled programs by source: a job matches every message
	// it scans and a search every DLQ, so each compiles once.
	cacheMu sync.Mutex
	cache   = map[string]*Program{}
)

// cacheSize bounds the cache; when full it starts over.
const cacheSize = 256

func environment() (*cel.Env, error) {
	envOnce.Do(func() {
		env, errEnv = cel.NewEnv(
			cel.Variable(VarID, cel.StringType),
			cel.Variable(VarKey, cel.StringType),
			cel.Variable(VarHeaders, cel.MapType(cel.StringType, cel.StringType)),
			cel.Variable(VarProperties, cel.MapType(cel.StringType, cel.StringType)),
			cel.Variable(VarBody, cel.StringType),
			cel.Variable(VarValue, cel.DynType),
			cel.Variable(VarFailure, cel.MapType(cel.StringType, cel.StringType)),
			cel.Variable(VarDeliveries, cel.IntType),
			cel.Variable(VarReplays, cel.IntType),
			cel.Variable(VarTimestamp, cel.TimestampType),
			cel.Variable(VarAge, cel.DurationType),
		)
	})
	return env, errEnv
}

// Compile compiles src, or returns the program compiled for it before. A
// bad expression is an *Error.
func Compile(src string) (*Program, error) {
	cacheMu.Lock()
	p, ok := cache[src]
	cacheMu.Unlock()
	if ok {
		return p, nil
	}
	p, err := compile(src)
	if err != nil {
		return nil, err
	}
	cacheMu.Lock()
	if len(cache) >= cacheSize {
		clear(cache)
	}
	cache[src] = p
	cacheMu.Unlock()
	return p, nil
}

func compile(src string) (*Program, error) {
	if len(src) > MaxLength {
		return nil, &Error{Line: 1, Column: 1, Msg: fmt.Sprintf("expression is %d bytes, more than %d", len(src), MaxLength)}
	}
	e, err := environment()
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	ast, iss := e.Compile(src)
	if iss != nil && iss.Err() != nil {
		first := iss.Errors()[0]
		return nil, &Error{Line: first.Location.Line(), Column: first.Location.Column() + 1, Msg: first.Message}
	}
	if !ast.OutputType().IsExactType(types.BoolType) && ast.OutputType() != cel.DynType {
		return nil, &Error{Line: 1, Column: 1, Msg: "the expression is a " + ast.OutputType().String() + ", not a bool"}
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, &Error{Line: 1, Column: 1, Msg: err.Error()}
	}
	p := &Program{src: src, prg: prg, refs: refs(ast.NativeRep()), uses: map[string]bool{}}
	for _, r := range p.refs {
		p.uses[r.Var] = true
	}
	return p, nil
}

// ErrNotBool is an evaluation whose result is no bool (a dyn value).
var ErrNotBool = errors.New("the expression is not a bool")

// Match evaluates the program on in. An evaluation error (a missing map
// key, a type mismatch on this message's value, the cost limit) is
// returned with false: the message is not selected.
func (p *Program) Match(in Input) (bool, error) {
	out, _, err := p.prg.Eval(in.activation(p.uses))
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, ErrNotBool
	}
	return b, nil
}
