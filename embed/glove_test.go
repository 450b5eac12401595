package embed_test

import (
	"context"
	"testing"

	"github.com/memstore/memstore/embed"
	"github.com/memstore/memstore/embed/embedtest"
)

func dotProduct(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Real word vectors, loaded as a model2vec model, put words of one
// meaning nearer than words of others, and so texts.
func TestModel2VecOnGloveVectors(t *testing.T) {
	m, err := embed.LoadModel2Vec(embedtest.GloveModel(t, "testdata/glove"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Dimensions() != 100 {
		t.Fatalf("dimensions %d, want 100", m.Dimensions())
	}
	vs, err := m.Embed(context.Background(), []string{"car", "automobile", "banana", "My truck needs new tires.", "Repairing a broken vehicle engine", "Apples and bananas for breakfast"})
	if err != nil {
		t.Fatal(err)
	}
	if near, far := dotProduct(vs[0], vs[1]), dotProduct(vs[0], vs[2]); near <= far {
		t.Errorf("car·automobile %.3f <= car·banana %.3f", near, far)
	}
	if near, far := dotProduct(vs[3], vs[4]), dotProduct(vs[3], vs[5]); near <= far {
		t.Errorf("truck tires · vehicle repair %.3f <= truck tires · fruit breakfast %.3f", near, far)
	}
}
