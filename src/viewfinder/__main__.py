from viewfinder.cli import main

main()
