package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// OpenAPIDoc describes every /api/v1 endpoint. It is kept beside the
// handlers and checked against their real answers by the tests, so a
// change to one without the other fails the build.
//
//go:embed openapi.json
var OpenAPIDoc []byte

// OpenAPI serves the document with the permissions of the rest of the
// API (viewer): it only describes what a viewer may read anyway, and a
// public copy would be one more unauthenticated path to reason about.
func (s *Server) OpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, OpenAPIDoc)
}

// Error is the body of every API error, whatever the status: a short
// message in Error, optionally more in Detail. Job names the job that
// holds a DLQ on a 409.
type Error struct {
	Error  string `json:"error"`
	Detail string `json:"detail,omitempty"`
	Job    string `json:"job,omitempty"`
}
