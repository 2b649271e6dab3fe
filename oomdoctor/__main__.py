from oomdoctor.cli import main

raise SystemExit(main())
