# Container shortcuts. `make up` starts the mesh on this machine with plain `docker run`
# (scripts/mesh.sh: no Compose plugin, no registry); `make compose-up` starts the one of
# deploy/compose.yaml (Docker Compose v2, images from Docker Hub);
# `make images` builds the four images of deploy/Dockerfile, tagged with the package
# version (the tag the Kubernetes base uses) and `latest` (the runner's tag that
# MEMQL_RUNNER_IMAGE names by default).

VERSION := $(shell node -p "require('./package.json').version")
COMPOSE := docker compose -f deploy/compose.yaml
IMAGES := agent workbench workbench-runtime runner

.PHONY: up down status compose-up compose-down images

up:
	bash scripts/mesh.sh up

down:
	bash scripts/mesh.sh down

status:
	bash scripts/mesh.sh status

compose-up:
	$(COMPOSE) up --build

compose-down:
	$(COMPOSE) down

images:
	for target in $(IMAGES); do \
	  docker build -f deploy/Dockerfile --target $$target -t memql/$$target:$(VERSION) -t memql/$$target:latest . || exit 1; \
	done
