package proxy

import (
	"fmt"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
)

// checkParams walks every action of t that can run (the template, and the
// ones it invokes) and returns an error naming the first parameter that
// the data there does not have: "FILE:LINE:COL: unknown parameter .Foo".
// Unlike executing the template once, it sees every branch, so a field
// used only for origins or only as root fails at load too. Where dot's
// type cannot be known (after a function call), the fields are not
// checked; execution with missingkey=error still refuses them.
func checkParams(t *template.Template, root reflect.Type) error {
	c := &paramChecker{t: t, root: root, done: map[string]bool{}}
	return c.template(t.Name(), root)
}

type paramChecker struct {
	t    *template.Template
	root reflect.Type
	done map[string]bool // template name + dot type walked
}

// scope holds the template variables in reach and their types (nil:
// unknown).
type scope map[string]reflect.Type

func (c *paramChecker) template(name string, dot reflect.Type) error {
	key := name + "\x00" + fmt.Sprint(dot)
	if c.done[key] {
		return nil
	}
	c.done[key] = true
	tt := c.t.Lookup(name)
	if tt == nil || tt.Tree == nil || tt.Tree.Root == nil {
		return nil // execution reports an undefined template
	}
	return c.node(tt.Tree, tt.Tree.Root, dot, scope{"$": dot})
}

func (c *paramChecker) node(tree *parse.Tree, n parse.Node, dot reflect.Type, vars scope) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, m := range n.Nodes {
			if err := c.node(tree, m, dot, vars); err != nil {
				return err
			}
		}
	case *parse.ActionNode:
		_, err := c.pipe(tree, n.Pipe, dot, vars)
		return err
	case *parse.IfNode:
		return c.branch(tree, &n.BranchNode, dot, vars, "if")
	case *parse.RangeNode:
		return c.branch(tree, &n.BranchNode, dot, vars, "range")
	case *parse.WithNode:
		return c.branch(tree, &n.BranchNode, dot, vars, "with")
	case *parse.TemplateNode:
		var typ reflect.Type // {{template "x"}} runs x with nil data
		if n.Pipe != nil {
			var err error
			if typ, err = c.pipe(tree, n.Pipe, dot, vars); err != nil {
				return err
			}
		}
		return c.template(n.Name, typ)
	}
	return nil
}

// branch checks an if, range or with: its pipeline, its list with dot
// (and variables) as the branch sets them, and its else list.
func (c *paramChecker) branch(tree *parse.Tree, b *parse.BranchNode, dot reflect.Type, vars scope, kind string) error {
	inner := scope{}
	for k, v := range vars {
		inner[k] = v
	}
	typ, err := c.pipeCmds(tree, b.Pipe, dot, inner)
	if err != nil {
		return err
	}
	listDot := dot
	switch kind {
	case "with":
		listDot = typ
		for _, d := range b.Pipe.Decl {
			inner[d.Ident[0]] = typ
		}
	case "range":
		key, elem := rangeTypes(typ)
		listDot = elem
		switch len(b.Pipe.Decl) {
		case 1:
			inner[b.Pipe.Decl[0].Ident[0]] = elem
		case 2:
			inner[b.Pipe.Decl[0].Ident[0]] = key
			inner[b.Pipe.Decl[1].Ident[0]] = elem
		}
	default:
		for _, d := range b.Pipe.Decl {
			inner[d.Ident[0]] = typ
		}
	}
	if err := c.node(tree, b.List, listDot, inner); err != nil {
		return err
	}
	if b.ElseList != nil {
		return c.node(tree, b.ElseList, dot, inner)
	}
	return nil
}

// rangeTypes are the key and element types of ranging over t (nil when
// unknown).
func rangeTypes(t reflect.Type) (key, elem reflect.Type) {
	if t == nil {
		return nil, nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return reflect.TypeFor[int](), t.Elem()
	case reflect.Map:
		return t.Key(), t.Elem()
	case reflect.Int:
		return t, nil
	}
	return nil, nil
}

// pipe checks a pipeline of an action and declares its variables.
func (c *paramChecker) pipe(tree *parse.Tree, p *parse.PipeNode, dot reflect.Type, vars scope) (reflect.Type, error) {
	typ, err := c.pipeCmds(tree, p, dot, vars)
	if err != nil {
		return nil, err
	}
	for _, d := range p.Decl {
		vars[d.Ident[0]] = typ
	}
	return typ, nil
}

// pipeCmds checks a pipeline's commands and returns the type of its
// result (nil when unknown).
func (c *paramChecker) pipeCmds(tree *parse.Tree, p *parse.PipeNode, dot reflect.Type, vars scope) (reflect.Type, error) {
	if p == nil {
		return nil, nil
	}
	var typ reflect.Type
	for _, cmd := range p.Cmds {
		var err error
		if typ, err = c.command(tree, cmd, dot, vars); err != nil {
			return nil, err
		}
	}
	return typ, nil
}

// command checks every argument of a command and returns the type of its
// result: a field's type, or nil after a function.
func (c *paramChecker) command(tree *parse.Tree, cmd *parse.CommandNode, dot reflect.Type, vars scope) (reflect.Type, error) {
	var typ reflect.Type
	for i, arg := range cmd.Args {
		t, err := c.arg(tree, arg, dot, vars)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			typ = t
			if _, isFunc := arg.(*parse.IdentifierNode); isFunc {
				typ = nil
			}
		}
	}
	return typ, nil
}

// arg checks one argument and returns its type (nil when unknown).
func (c *paramChecker) arg(tree *parse.Tree, n parse.Node, dot reflect.Type, vars scope) (reflect.Type, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return c.fields(tree, n, dot, n.Ident)
	case *parse.VariableNode:
		t, ok := vars[n.Ident[0]]
		if !ok {
			return nil, nil // the parser refuses undefined variables
		}
		return c.fields(tree, n, t, n.Ident[1:])
	case *parse.ChainNode:
		t, err := c.arg(tree, n.Node, dot, vars)
		if err != nil {
			return nil, err
		}
		return c.fields(tree, n, t, n.Field)
	case *parse.PipeNode:
		return c.pipeCmds(tree, n, dot, vars)
	}
	return nil, nil // literals, functions, nil
}

// fields follows names from t and fails on the first t does not have.
func (c *paramChecker) fields(tree *parse.Tree, n parse.Node, t reflect.Type, names []string) (reflect.Type, error) {
	for _, name := range names {
		next, ok := fieldType(t, name)
		if !ok {
			loc, _ := tree.ErrorContext(n)
			return nil, fmt.Errorf("%s: unknown parameter .%s%s", loc, name, knownOf(t, c.root))
		}
		t = next
	}
	return t, nil
}

// fieldType is the type of field or method name of t; ok is false when t
// has none. An unknown t (nil, an interface) accepts every name.
func fieldType(t reflect.Type, name string) (reflect.Type, bool) {
	if t == nil {
		return nil, true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if f, ok := t.FieldByName(name); ok && f.IsExported() {
			return f.Type, true
		}
		if m, ok := reflect.PointerTo(t).MethodByName(name); ok && m.Type.NumOut() > 0 {
			return m.Type.Out(0), true
		}
		return nil, false
	case reflect.Map:
		return t.Elem(), true
	case reflect.Interface:
		return nil, true
	}
	return nil, false
}

// knownOf lists the parameters of t for an error: the template
// parameters (docs/lab.md) or the fields of a route.
func knownOf(t, root reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return fmt.Sprintf(" (%s has no fields)", t)
	}
	var names []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			names = append(names, "."+f.Name)
		}
	}
	what := "the template parameters are"
	if t != root {
		what = "here dot is a " + t.Name() + ", with"
	}
	return fmt.Sprintf(": %s %s (docs/lab.md)", what, strings.Join(names, ", "))
}
