package web

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// pathParam returns a path parameter as the name it stands for, decoded
// exactly once. It is the only way handlers read path parameters.
//
// echo routes on the escaped path (URL.RawPath) when the request has one,
// so that an escaped "/" stays inside its segment, and then the parameter
// is still escaped. Go sets RawPath only when the path's escaping differs
// from the default one; otherwise echo routes on the decoded URL.Path and
// the parameter is already decoded. Decoding it again would turn the group
// "a%41-0" (linked as a%2541-0) into "aA-0".
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", echo.NewHTTPError(http.StatusBadRequest, "malformed "+name+" in path")
	}
	return u, nil
}
