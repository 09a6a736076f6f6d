package api

import "github.com/queuewatch/queuewatch/web/view"

// Server answers the JSON API (/api/v1): its handlers are the route
// table's API lines.
type Server struct{ *view.Server }

// New is the API over v.
func New(v *view.Server) *Server { return &Server{v} }
