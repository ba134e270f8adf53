provider sdtv2 {
	probe add(int, int);
	probe hello(char *);
};
