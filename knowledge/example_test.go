package knowledge_test

import (
	"fmt"

	"github.com/labmate/labmate/knowledge"
)

func ExampleSplit() {
	doc := &knowledge.Doc{Source: "manual.md", Format: "markdown", Text: `# Pump

## Priming
Fill the syringe, then run PRIME twice.

## Flow rate
Set the rate in µL/min.
`}
	for _, c := range knowledge.Split(doc) {
		fmt.Println(c.Cite())
	}
	// Output:
	// manual.md:3-4 (Pump > Priming)
	// manual.md:6-7 (Pump > Flow rate)
}
