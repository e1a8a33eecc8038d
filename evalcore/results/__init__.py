"""Results: the leaderboard, its reduction and statistics, calibration, comparison, labels."""
