struct big {
	char bytes[9000];
};

this struct big b;
