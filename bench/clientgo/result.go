package main

import (
	"encoding/json"
	"fmt"
)

// printResult writes the one machine-readable line the TypeScript benchmarks parse: "RESULT " + JSON.
func printResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Println("RESULT " + string(b))
	return nil
}
