struct b {
	float : 1;
} x;
