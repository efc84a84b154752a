# Container shortcuts. `make up` starts the mesh of deploy/compose.yaml on this machine;
# `make images` builds the four images of deploy/Dockerfile, tagged with the package
# version (the tag the Kubernetes base uses) and `latest` (the runner's tag that
# MEMQL_RUNNER_IMAGE names by default).

VERSION := $(shell node -p "require('./package.json').version")
COMPOSE := docker compose -f deploy/compose.yaml
IMAGES := agent workbench workbench-runtime runner

.PHONY: up down images

up:
	$(COMPOSE) up --build

down:
	$(COMPOSE) down

images:
	for target in $(IMAGES); do \
	  docker build -f deploy/Dockerfile --target $$target -t memql/$$target:$(VERSION) -t memql/$$target:latest . || exit 1; \
	done
