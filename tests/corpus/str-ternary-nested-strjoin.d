/*
 * Only one branch of ?: runs, so its branches' string temporaries share
 * scratch space: four levels of strjoin()s of strjoin()s fit in a clause.
 */
BEGIN
{
	x = 2;
	printf("%s\n", x > 3 ? strjoin(strjoin("a", "bc"), strjoin("de", "f")) :
	    x > 2 ? strjoin(strjoin("A", "BC"), strjoin("DE", "F")) :
	    x > 1 ? strjoin(strjoin("u", "vw"), strjoin("xy", "z")) :
	    strjoin(strjoin("U", "VW"), strjoin("XY", "Z")));
	x = 0;
	printf("%s\n", x > 3 ? strjoin(strjoin("a", "bc"), strjoin("de", "f")) :
	    x > 2 ? strjoin(strjoin("A", "BC"), strjoin("DE", "F")) :
	    x > 1 ? strjoin(strjoin("u", "vw"), strjoin("xy", "z")) :
	    strjoin(strjoin("U", "VW"), strjoin("XY", "Z")));
	exit(0);
}
