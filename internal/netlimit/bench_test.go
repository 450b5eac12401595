package netlimit_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// BenchmarkUploads sends request bodies of 256 KiB from several clients
// at once to a server on a Listener, whose handlers read them whole: the
// path of every upload's reads.
func BenchmarkUploads(b *testing.B) {
	const size = 256 << 10
	_, url := serve(b, 64, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d", n)
	}))
	body := bytes.Repeat([]byte("x"), size)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	b.SetBytes(size)
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := hc.Post(url, "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			got, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(got) != fmt.Sprint(size) {
				b.Errorf("answer %q", got)
				return
			}
		}
	})
}
