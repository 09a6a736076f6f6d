package components

import "time"

// Now carries the render time so relative times on one page agree.
type Now struct{ T time.Time }
