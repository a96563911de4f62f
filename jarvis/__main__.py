from jarvis.cli import main

raise SystemExit(main())
