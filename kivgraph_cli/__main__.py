from kivgraph_cli.main import main

main()
