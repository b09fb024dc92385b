module kivgraph.local/gotypes

go 1.22
