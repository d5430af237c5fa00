package store_test

import (
	"path/filepath"
	"testing"

	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		s, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
