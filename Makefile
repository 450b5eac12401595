# make dist: release archives for every target in dist/ (scripts/dist.sh).
# make dist TARGETS=host: for this machine only. OUT=DIR: elsewhere.
OUT ?= dist
TARGETS ?=

.PHONY: dist
dist:
	scripts/dist.sh --out $(OUT) $(TARGETS)
