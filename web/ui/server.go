package ui

import "github.com/queuewatch/queuewatch/web/view"

// Server renders the pages: its handlers are the route table's page lines.
type Server struct{ *view.Server }

// New is the pages over v.
func New(v *view.Server) *Server { return &Server{v} }
