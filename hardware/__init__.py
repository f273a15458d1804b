"""The CALL button box: protocol, host driver, software box, firmware and simulator harness."""
