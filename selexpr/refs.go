package selexpr

import (
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"

	"github.com/queuewatch/queuewatch/jsonpath"
)

// Ref is one thing an expression reads: a variable and the constant steps
// taken into it. value.order.id is {value, [order id]};
// headers["x-tenant"] is {headers, [x-tenant]}; a variable used whole, or
// indexed by something computed, has no steps past that point — it reads
// all of it, so a caller checking masks must treat it as reading every
// value inside.
type Ref struct {
	Var  string
	Path []jsonpath.Step
}

// refs lists the longest chains of select and constant-index steps that
// start at a variable. The walk is pre-order, so a chain is met at its
// outermost step first, and its inner nodes are then skipped.
func refs(a *ast.AST) []Ref {
	var out []Ref
	seen := map[int64]bool{}
	ast.PreOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if seen[e.ID()] {
			return
		}
		r, ids, ok := chain(e)
		if !ok {
			return
		}
		for _, id := range ids {
			seen[id] = true
		}
		if variables[r.Var] { // not a comprehension's own variable
			out = append(out, r)
		}
	}))
	return out
}

// chain reads e as a variable followed by constant steps, with the ids of
// the nodes it is made of.
func chain(e ast.Expr) (Ref, []int64, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return Ref{Var: e.AsIdent()}, []int64{e.ID()}, true
	case ast.SelectKind:
		s := e.AsSelect()
		r, ids, ok := chain(s.Operand())
		if !ok {
			return Ref{}, nil, false
		}
		r.Path = append(r.Path, jsonpath.Step{Key: s.FieldName(), IsKey: true})
		return r, append(ids, e.ID()), true
	case ast.CallKind:
		c := e.AsCall()
		if (c.FunctionName() != operators.Index && c.FunctionName() != operators.OptIndex) || len(c.Args()) != 2 {
			return Ref{}, nil, false
		}
		r, ids, ok := chain(c.Args()[0])
		if !ok {
			return Ref{}, nil, false
		}
		arg := c.Args()[1]
		if arg.Kind() != ast.LiteralKind {
			// Indexed by something computed: it may read any element.
			return r, append(ids, e.ID()), true
		}
		switch v := arg.AsLiteral().(type) {
		case types.String:
			r.Path = append(r.Path, jsonpath.Step{Key: string(v), IsKey: true})
		case types.Int:
			r.Path = append(r.Path, jsonpath.Step{Index: int(v)})
		default:
			return r, append(ids, e.ID(), arg.ID()), true
		}
		return r, append(ids, e.ID(), arg.ID()), true
	}
	return Ref{}, nil, false
}
