enum colors {
	RED,
	GREEN,
	GREEN = 2
};
