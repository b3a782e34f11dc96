# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# JavaChain.class: a known chain of Java methods (tests/integration/run-java.sh), compiled by
# Debian's default JDK, whatever its version (17 on Debian 12, 21 on Debian 13: make deps
# installs default-jdk-headless, whose /usr/lib/jvm/default-java links to it).
JAVA_HOME_DEBIAN ?= /usr/lib/jvm/default-java
TEST_TARGETS += $(TARGETS_DIR)/JavaChain.class

$(TARGETS_DIR)/JavaChain.class: $(TARGETS_SRC)/JavaChain.java | $(TARGETS_DIR)
	$(call msg,JAVAC,$@)
	$(Q)$(JAVA_HOME_DEBIAN)/bin/javac -d $(TARGETS_DIR) $<
