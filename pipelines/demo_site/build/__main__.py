from pipelines.demo_site.build.generate import main

main()
