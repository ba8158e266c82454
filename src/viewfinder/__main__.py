from viewfinder.main import main

main()
