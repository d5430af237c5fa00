package split

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

func TestZZTry(t *testing.T) {
	f := os.Getenv("TRY_FILE")
	if f == "" {
		t.Skip()
	}
	b, _ := os.ReadFile(f)
	mc, _ := strconv.Atoi(os.Getenv("TRY_MC"))
	ml, _ := strconv.Atoi(os.Getenv("TRY_ML"))
	for i, p := range Split(string(b), Limits{MaxChars: mc, MaxLines: ml}) {
		fmt.Printf("--- part %d open=%q close=%q runes=%d\n%s\n", i, p.Open, p.Close, len([]rune(p.Text())), p.Text())
	}
}
