package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// identRE is an unquoted SQL identifier, optionally schema-qualified. The
// outbox collector writes table and column names into its query as they
// are, so nothing else may pass: no quotes, spaces or operators.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$`)

// CheckIdentifier reports why s cannot be used as a table or column name
// in the outbox query, or nil.
func CheckIdentifier(s string) error {
	if len(s) > 128 || !identRE.MatchString(s) {
		return fmt.Errorf("%s is not a plain SQL identifier (letters, digits, '_', '$', optionally schema.name)", quoteScalar(s))
	}
	return nil
}

// forbiddenWords can only start or continue a statement or a subquery, never
// appear in a plain boolean expression over a row. Refusing them refuses
// every subquery (SELECT), every write (INSERT, UPDATE, DELETE, ...) and
// every way out of the WHERE clause (UNION, INTO, FOR, LIMIT, ...).
var forbiddenWords = map[string]bool{
	"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "UPSERT": true,
	"REPLACE": true, "CREATE": true, "DROP": true, "ALTER": true, "TRUNCATE": true, "RENAME": true,
	"GRANT": true, "REVOKE": true, "COPY": true, "CALL": true, "EXEC": true, "EXECUTE": true, "DO": true,
	"WITH": true, "UNION": true, "INTERSECT": true, "EXCEPT": true, "INTO": true, "FROM": true,
	"WHERE": true, "SET": true, "LOCK": true, "UNLOCK": true, "VACUUM": true, "ANALYZE": true,
	"HANDLER": true, "LOAD": true, "PREPARE": true, "DEALLOCATE": true, "BEGIN": true, "COMMIT": true,
	"ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "LIMIT": true, "OFFSET": true, "ORDER": true,
	"GROUP": true, "HAVING": true, "RETURNING": true, "VALUES": true, "TABLE": true, "LISTEN": true,
	"NOTIFY": true, "SHOW": true, "EXPLAIN": true, "KILL": true, "SHUTDOWN": true, "FOR": true,
	"PROCEDURE": true, "OUTFILE": true, "DUMPFILE": true, "WINDOW": true, "OVER": true, "LATERAL": true,
	"EXISTS": true, "ANY": true, "SOME": true, "ALL": true, "ARRAY": true, "ROW": true,
	// UESCAPE changes what a U&'...' string or U&"..." name spells.
	"UESCAPE": true,
}

// allowedFunctions are the functions a pending condition may call: pure,
// cheap and present in PostgreSQL, MySQL or MariaDB. Anything else (pg_sleep,
// SLEEP, BENCHMARK, nextval, dblink, a user-defined function with side
// effects) is refused: a condition must not be able to wait, write or
// reach out.
var allowedFunctions = map[string]bool{
	"COALESCE": true, "NULLIF": true, "IFNULL": true, "ISNULL": true, "LOWER": true, "UPPER": true,
	"LENGTH": true, "CHAR_LENGTH": true, "ABS": true, "GREATEST": true, "LEAST": true, "NOW": true,
	"CURRENT_TIMESTAMP": true, "UTC_TIMESTAMP": true, "TRIM": true, "DATE_SUB": true, "DATE_ADD": true,
}

// allowedCasts are the types a value may be cast to (x::text) or a typed
// literal may name (TIMESTAMP '...'). Any other type is refused: a cast
// runs the target type's input function, a user-defined CREATE CAST
// function or a domain's CHECK, all of which may be user code, and reg*
// types read the catalogs.
var allowedCasts = map[string]bool{
	"TEXT": true, "VARCHAR": true, "CHAR": true, "INT": true, "INTEGER": true, "INT2": true, "INT4": true,
	"INT8": true, "SMALLINT": true, "BIGINT": true, "NUMERIC": true, "DECIMAL": true, "REAL": true,
	"FLOAT4": true, "FLOAT8": true, "BOOLEAN": true, "BOOL": true, "DATE": true, "TIME": true,
	"TIMESTAMP": true, "TIMESTAMPTZ": true, "INTERVAL": true, "JSON": true, "JSONB": true, "UUID": true,
}

// allowedOperators are the operators a condition may use. Operators are
// lexed as PostgreSQL does, as the longest run of operator characters, so
// that a user-defined operator (PostgreSQL lets any user define ===, say,
// over any function) is one refused token. MySQL's := assigns.
var allowedOperators = map[string]bool{
	"=": true, "<>": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "||": true, "&": true, "|": true, "^": true,
	"~": true, "~*": true, "!~": true, "!~*": true, "->": true, "->>": true, "::": true, ".": true,
}

// reservedBeforeString are the keywords a string literal may always
// follow: PostgreSQL allows none of them as a type name. Any other word
// before a string makes a typed literal (type 'text'), checked against
// allowedCasts, except where afterValue places it.
var reservedBeforeString = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "WHEN": true, "THEN": true, "ELSE": true,
	"CASE": true, "BETWEEN": true, "TO": true, "IN": true,
}

// operatorWords are keywords that take a value on their left. LIKE, ILIKE
// and ESCAPE may also name a type ("like 'x'" is a typed literal), so a
// string may follow them only where they come after a value.
var operatorWords = map[string]bool{"LIKE": true, "ILIKE": true, "ESCAPE": true}

// CheckCondition reports why cond cannot be an outbox table's pending
// condition, or nil. A condition is accepted only when it is one boolean
// expression over the row: no statement separator, no comment, no
// subquery, no dollar-quoting, backslash or unicode escapes (whose meaning
// differs between databases), balanced parentheses, no top-level comma,
// only allowlisted function calls, casts and operators, and no qualified
// names (myschema.lower(x) may be anyone's function, and PostgreSQL reads
// outbox.f as f(outbox)). The collector still parenthesizes it, and
// runs it in a read-only transaction with a statement timeout; this check
// is what keeps "x) OR (SELECT pg_sleep(60)" out.
//
// For example "sent_at IS NULL" and "status IN ('new', 'retry') AND
// attempts < 5" pass; "1=1; DROP TABLE outbox" and "id IN (SELECT id FROM
// t)" do not.
func CheckCondition(cond string) error {
	if strings.TrimSpace(cond) == "" {
		return fmt.Errorf("empty condition")
	}
	if strings.ContainsRune(cond, '\\') {
		// MySQL reads \' inside a string as an escaped quote, PostgreSQL
		// as a backslash and the closing quote: the two would disagree
		// about where the string ends.
		return fmt.Errorf("backslashes are not allowed")
	}
	toks, err := lexCondition(cond)
	if err != nil {
		return err
	}
	return checkTokens(toks)
}

type tokKind int

const (
	tokWord tokKind = iota
	tokQuotedIdent
	tokString
	tokNumber
	tokOp
	tokOpen
	tokClose
	tokComma
)

type token struct {
	kind tokKind
	text string
	// end is the offset after the token in the condition, which tells a
	// string prefix (E'x') from a typed literal (date 'x').
	pos, end int
}

// lexCondition splits cond into tokens, refusing characters that have no
// place in an expression or that hide text from this lexer.
func lexCondition(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ';':
			return nil, fmt.Errorf("';' is not allowed: the condition is one expression, not a statement")
		case c == '$' || c == '#' || c == '`' || c == '{' || c == '}' || c == '?' || c == '@' || c == '[' || c == ']':
			return nil, fmt.Errorf("%q is not allowed in a condition", c)
		case strings.HasPrefix(s[i:], "--") || strings.HasPrefix(s[i:], "/*") || strings.HasPrefix(s[i:], "*/"):
			return nil, fmt.Errorf("comments are not allowed")
		case (c == 'u' || c == 'U') && strings.HasPrefix(s[i+1:], "&") && len(s) > i+2 && (s[i+2] == '\'' || s[i+2] == '"'):
			return nil, fmt.Errorf("unicode escapes (U&) are not allowed")
		case c == '\'' || c == '"':
			end, err := endOfQuoted(s, i, c)
			if err != nil {
				return nil, err
			}
			kind := tokString
			if c == '"' {
				kind = tokQuotedIdent
			}
			toks = append(toks, token{kind, s[i:end], i, end})
			i = end
		case isWordStart(c):
			toks, i = appendRun(toks, s, i, tokWord, isWordPart)
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			toks, i = appendRun(toks, s, i, tokNumber, func(c byte) bool { return c >= '0' && c <= '9' || c == '.' })
		case c == '(':
			toks, i = append(toks, token{tokOpen, "(", i, i + 1}), i+1
		case c == ')':
			toks, i = append(toks, token{tokClose, ")", i, i + 1}), i+1
		case c == ',':
			toks, i = append(toks, token{tokComma, ",", i, i + 1}), i+1
		case c == '.':
			toks, i = append(toks, token{tokOp, ".", i, i + 1}), i+1
		case isOpChar(c):
			toks, i = appendOperator(toks, s, i)
		default:
			return nil, fmt.Errorf("character %q is not allowed in a condition", c)
		}
	}
	return toks, nil
}

// endOfQuoted returns the index after the quote closing the quoted text
// that starts at s[i]; a doubled quote is an escaped one.
func endOfQuoted(s string, i int, q byte) (int, error) {
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			j++
			continue
		}
		return j + 1, nil
	}
	return 0, fmt.Errorf("unterminated %c quote", q)
}

// appendRun appends the token of kind that starts at s[i] and continues
// while in accepts, and returns the offset after it.
func appendRun(toks []token, s string, i int, kind tokKind, in func(byte) bool) ([]token, int) {
	j := i + 1
	for j < len(s) && in(s[j]) {
		j++
	}
	return append(toks, token{kind, s[i:j], i, j}), j
}

// appendOperator appends the operator that starts at s[i] as PostgreSQL
// lexes it: the longest run of operator characters, less any trailing '+'
// or '-' unless the run has one of ~ ! % ^ & |, so that x=-1 is x = -1.
func appendOperator(toks []token, s string, i int) ([]token, int) {
	j := i + 1
	for j < len(s) && isOpChar(s[j]) {
		j++
	}
	if !strings.ContainsAny(s[i:j], "~!%^&|") {
		for j > i+1 && (s[j-1] == '+' || s[j-1] == '-') {
			j--
		}
	}
	return append(toks, token{tokOp, s[i:j], i, j}), j
}

func isOpChar(c byte) bool { return strings.IndexByte("=<>!+-*/%|&^~:", c) >= 0 }

func isWordStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isWordPart(c byte) bool  { return isWordStart(c) || c >= '0' && c <= '9' }

// checkTokens enforces the expression rules on the token stream.
func checkTokens(toks []token) error {
	depth := 0
	// lists records, per open parenthesis, whether it opened a function
	// call or an IN list, where commas are allowed.
	var lists []bool
	for i, t := range toks {
		if err := checkToken(toks, i); err != nil {
			return err
		}
		switch t.kind {
		case tokOpen:
			depth++
			list := i > 0 && toks[i-1].kind == tokWord &&
				(strings.EqualFold(toks[i-1].text, "IN") || allowedFunctions[strings.ToUpper(toks[i-1].text)])
			lists = append(lists, list)
		case tokClose:
			if depth == 0 {
				return fmt.Errorf("unbalanced ')'")
			}
			depth--
			lists = lists[:len(lists)-1]
		case tokComma:
			if depth == 0 || !lists[len(lists)-1] {
				return fmt.Errorf("',' is only allowed inside a function call or an IN list: the condition is one expression")
			}
		}
	}
	if depth != 0 {
		return fmt.Errorf("unbalanced '('")
	}
	return nil
}

// checkToken checks toks[i] against what precedes and follows it: words,
// calls, qualified names, casts, typed literals and operators.
func checkToken(toks []token, i int) error {
	t := toks[i]
	next := func(k int) (token, bool) {
		if i+k < len(toks) {
			return toks[i+k], true
		}
		return token{}, false
	}
	n, hasNext := next(1)
	call := hasNext && n.kind == tokOpen
	switch t.kind {
	case tokWord:
		up := strings.ToUpper(t.text)
		if forbiddenWords[up] && (up != "FROM" || !follows(toks, i, "DISTINCT")) {
			return fmt.Errorf("%s is not allowed: the condition must be a plain boolean expression over the row (no statements or subqueries)", up)
		}
		if call && !isKeywordBeforeParen(up) && !allowedFunctions[up] {
			return fmt.Errorf("function %s is not allowed (allowed: %s)", t.text, allowedFunctionList())
		}
		if hasNext && n.kind == tokString && !allowedCasts[up] && !isStringPrefix(up, t, n) && !keywordBeforeString(toks, i, up) {
			return fmt.Errorf("%s %s is not allowed: a typed literal runs its type's input function (allowed types: %s)", t.text, n.text, allowedCastList())
		}
	case tokQuotedIdent:
		if call {
			return fmt.Errorf("function %s is not allowed", t.text)
		}
		if hasNext && n.kind == tokString {
			return fmt.Errorf("%s %s is not allowed: a typed literal runs its type's input function, and a quoted type name is never needed", t.text, n.text)
		}
	case tokOp:
		if !allowedOperators[t.text] {
			return fmt.Errorf("operator %s is not allowed (allowed: %s)", t.text, allowedOperatorList())
		}
		switch t.text {
		case ".":
			return qualifiedName(toks, i)
		case "::":
			if !hasNext || n.kind == tokOp || n.kind == tokOpen || n.kind == tokClose || n.kind == tokComma {
				return fmt.Errorf("a cast needs a type (allowed types: %s)", allowedCastList())
			}
			if n.kind != tokWord || !allowedCasts[strings.ToUpper(n.text)] {
				return fmt.Errorf("cast to %s is not allowed (allowed types: %s)", n.text, allowedCastList())
			}
		}
	}
	return nil
}

// keywordBeforeString reports whether the keyword w at toks[i] may be
// followed by a string without making it a typed literal.
func keywordBeforeString(toks []token, i int, w string) bool {
	switch {
	case reservedBeforeString[w]:
		return true
	case operatorWords[w]:
		// x LIKE 'a', x NOT LIKE 'a', x LIKE 'a' ESCAPE '!'
		if i > 1 && strings.EqualFold(toks[i-1].text, "NOT") && toks[i-1].kind == tokWord {
			return isValue(toks[i-2])
		}
		return i > 0 && isValue(toks[i-1])
	case w == "FROM": // IS [NOT] DISTINCT FROM 'a'; any other FROM is refused
		return follows(toks, i, "DISTINCT")
	case w == "ZONE": // AT TIME ZONE 'UTC'
		return follows(toks, i, "TIME") && follows(toks, i-1, "AT")
	}
	return false
}

// follows reports whether the token before toks[i] is the word w.
func follows(toks []token, i int, w string) bool {
	return i > 0 && toks[i-1].kind == tokWord && strings.EqualFold(toks[i-1].text, w)
}

// isValue reports whether t ends a value: a column, a literal, a quoted
// name or a closing parenthesis, not a keyword that needs one.
func isValue(t token) bool {
	switch t.kind {
	case tokString, tokNumber, tokQuotedIdent, tokClose:
		return true
	case tokWord:
		up := strings.ToUpper(t.text)
		return !reservedBeforeString[up] && !operatorWords[up] && !forbiddenWords[up] && up != "IS"
	}
	return false
}

// qualifiedName explains why the name around the '.' at toks[i] is
// refused. A qualified function may be anyone's (a user's
// myschema.lower shadows nothing yet runs their code), and PostgreSQL
// reads table.name as the function call name(table) when the table has no
// column of that name. Conditions name their columns plainly.
func qualifiedName(toks []token, i int) error {
	var left, right string
	if i > 0 {
		left = toks[i-1].text
	}
	if i+1 < len(toks) {
		right = toks[i+1].text
	}
	if i+2 < len(toks) && toks[i+2].kind == tokOpen {
		return fmt.Errorf("qualified function call %s.%s is not allowed: call allow-listed functions by their plain name", left, right)
	}
	return fmt.Errorf("qualified name %s.%s is not allowed: name the column plainly (PostgreSQL reads table.name as a call of function name when no column has that name)", left, right)
}

// isStringPrefix reports whether word w, written right against the string
// s, is a literal's prefix: E'...' (escapes, harmless without backslashes),
// N'...', B'...' and X'...'.
func isStringPrefix(w string, t, s token) bool {
	return t.end == s.pos && len(w) == 1 && strings.Contains("ENBX", w)
}

// isKeywordBeforeParen reports whether w is an operator keyword that may be
// followed by a parenthesis without being a call: x IN ('a', 'b'),
// NOT (a OR b), CAST is refused (it is not needed; use ::type).
func isKeywordBeforeParen(w string) bool {
	switch w {
	case "IN", "NOT", "AND", "OR", "IS", "LIKE", "ILIKE", "BETWEEN", "INTERVAL", "WHEN", "THEN", "ELSE", "CASE":
		return true
	}
	return false
}

func allowedFunctionList() string { return sortedList(allowedFunctions) }
func allowedCastList() string     { return sortedList(allowedCasts) }
func allowedOperatorList() string { return sortedList(allowedOperators) }

func sortedList(set map[string]bool) string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, strings.ToLower(n))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
