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

// CheckCondition reports why cond cannot be an outbox table's pending
// condition, or nil. A condition is accepted only when it is one boolean
// expression over the row: no statement separator, no comment, no
// subquery, no dollar-quoting or backslash escapes (whose meaning differs
// between databases), balanced parentheses, no top-level comma, only
// allowlisted function calls. The collector still parenthesizes it, and
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
		case c == '\'':
			end, err := endOfQuoted(s, i, '\'')
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokString, s[i:end]})
			i = end
		case c == '"':
			end, err := endOfQuoted(s, i, '"')
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokQuotedIdent, s[i:end]})
			i = end
		case isWordStart(c):
			j := i + 1
			for j < len(s) && isWordPart(s[j]) {
				j++
			}
			toks = append(toks, token{tokWord, s[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			toks = append(toks, token{tokNumber, s[i:j]})
			i = j
		case c == '(':
			toks = append(toks, token{tokOpen, "("})
			i++
		case c == ')':
			toks = append(toks, token{tokClose, ")"})
			i++
		case c == ',':
			toks = append(toks, token{tokComma, ","})
			i++
		case strings.IndexByte("=<>!+-*/%|&^~:.", c) >= 0:
			toks = append(toks, token{tokOp, string(c)})
			i++
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

func isWordStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isWordPart(c byte) bool  { return isWordStart(c) || c >= '0' && c <= '9' }

// checkTokens enforces the expression rules on the token stream.
func checkTokens(toks []token) error {
	depth := 0
	// lists records, per open parenthesis, whether it opened a function
	// call or an IN list, where commas are allowed.
	var lists []bool
	for i, t := range toks {
		switch t.kind {
		case tokWord:
			up := strings.ToUpper(t.text)
			if forbiddenWords[up] {
				return fmt.Errorf("%s is not allowed: the condition must be a plain boolean expression over the row (no statements or subqueries)", up)
			}
			if i+1 < len(toks) && toks[i+1].kind == tokOpen && !isKeywordBeforeParen(up) && !allowedFunctions[up] {
				return fmt.Errorf("function %s is not allowed (allowed: %s)", t.text, allowedFunctionList())
			}
		case tokQuotedIdent:
			if i+1 < len(toks) && toks[i+1].kind == tokOpen {
				return fmt.Errorf("function %s is not allowed", t.text)
			}
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

func allowedFunctionList() string {
	names := make([]string, 0, len(allowedFunctions))
	for n := range allowedFunctions {
		names = append(names, strings.ToLower(n))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
