package store

import "encoding/json"

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("store: marshal: " + err.Error())
	}
	return string(b)
}
