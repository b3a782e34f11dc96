# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# JavaChain.class: a known chain of Java methods (tests/integration/run-java.sh), compiled by
# Debian's OpenJDK 17 (make deps installs openjdk-17-jdk-headless).
TEST_TARGETS += $(TARGETS_DIR)/JavaChain.class

$(TARGETS_DIR)/JavaChain.class: $(TARGETS_SRC)/JavaChain.java | $(TARGETS_DIR)
	$(call msg,JAVAC,$@)
	$(Q)javac -d $(TARGETS_DIR) $<
