module kivgraph.local/benchmarks/go_refs

go 1.22
