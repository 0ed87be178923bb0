from agentguard.cli import main

main()
