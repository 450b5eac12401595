package memdir

import "unicode/utf16"

// Djb2 exposes the hash of long project names to the tests.
func Djb2(s string) int32 { return djb2(utf16.Encode([]rune(s))) }
