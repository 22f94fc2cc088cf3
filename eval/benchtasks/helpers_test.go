package benchtasks_test

import (
	"fmt"
	"math"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func diff(a, b float64) float64 { return math.Abs(a - b) }
