package dataset_test

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/dataset"
)

func ExampleExpandGlob() {
	v, err := dataset.ExpandGlob("dev-{a,b}[08-10:2]", 0)
	fmt.Println(v, err)

	_, err = dataset.ExpandGlob("dev-[1-25", 0)
	fmt.Println(err)
	// Output:
	// [dev-a08 dev-a10 dev-b08 dev-b10] <nil>
	// glob offset 4: unterminated [: missing ]
}

func ExampleRange() {
	v, err := dataset.Range(10, 0, -5, "id-%03d")
	fmt.Println(v, err)
	// Output: [id-010 id-005 id-000] <nil>
}

func ExampleReadCSV() {
	t, err := dataset.ReadCSV(strings.NewReader("login,password\nann,s3cret\n"), dataset.CSVOptions{Header: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	col, _ := t.Column("password")
	fmt.Println(t.Columns, t.Rows[0][col])
	// Output: [login password] s3cret
}

func ExampleCursor() {
	perVU := dataset.NewCursor(3, dataset.PerVU)
	seq := dataset.NewCursor(3, dataset.Sequential)
	for vu := 1; vu <= 4; vu++ {
		fmt.Println(vu, perVU.Next(vu, nil), seq.Next(vu, nil))
	}
	// Output:
	// 1 0 0
	// 2 1 1
	// 3 2 2
	// 4 0 0
}
