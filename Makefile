# The two commands of the README. Both work on a fresh machine: they install what they need.
.PHONY: run test cluster-up cluster-down
run:   ## build, start the local real YARN cluster if none is configured, run the main job
	bash scripts/main.sh
test:  ## every test, against a real YARN cluster that it starts and stops
	bash scripts/test.sh
cluster-up:
	bash tests/cluster/cluster.sh up
cluster-down:
	bash tests/cluster/cluster.sh down
